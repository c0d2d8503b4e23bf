#!lua flags=
-- Bootstrap: loads one account Redis lacks from the ledger, whole: its available and held quota, its fence
-- mark and its open holds (each hold's record and its place in the partition's expiry index), so that after
-- Redis lost its data a hold can still be captured, released or expire, and a superseded lock holder is
-- still refused. An account Redis holds is left alone. No journal entry: the ledger already holds all this.
-- KEYS: marker, account, hold index, then one hold key per hold
-- ARGV: account, available, held, fence ('-' when none), marker value, then per hold: hold id, amount, expires ms
-- Reply: {'loaded'} or {'present'}; {'marker_mismatch', value}
local account, available, held, fence, expected = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local n = #KEYS - 3

local bad = id_problem(account)
if bad then return {'invalid_id', 'ACCOUNT', bad} end
if amount_problem(available, true) or amount_problem(held, true) or (fence ~= '-' and not token_ok(fence))
    or #ARGV ~= 5 + 3 * n then
  return {'invalid_argument', 'figures'}
end
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':acct:' .. account or KEYS[3] ~= base .. ':holds' then
  return {'invalid_argument', 'keys'}
end
for i = 1, n do
  local id, amount, expires = ARGV[3 + 3 * i], ARGV[4 + 3 * i], ARGV[5 + 3 * i]
  if id_problem(id) or KEYS[3 + i] ~= base .. ':hold:' .. account .. ':' .. id or amount_problem(amount, false)
      or not positive_integer(expires) then
    return {'invalid_argument', 'hold'}
  end
end

local marker = redis.call('GET', KEYS[1])
if marker and marker ~= expected then return {'marker_mismatch', marker} end
if redis.call('EXISTS', KEYS[2]) == 1 then return {'present'} end

-- Every check is done; writes start here.
redis.call('HSET', KEYS[2], 'balance', available)
if held ~= '0' then redis.call('HSET', KEYS[2], 'held', held) end
if fence ~= '-' then redis.call('HSET', KEYS[2], 'fence', fence) end
for i = 1, n do
  local id, amount, expires = ARGV[3 + 3 * i], ARGV[4 + 3 * i], ARGV[5 + 3 * i]
  -- A duplicate of the hold answers these figures: the account's as loaded (the first answer's are gone).
  redis.call('HSET', KEYS[3 + i], 'state', 'held', 'amount', amount, 'expires', expires, 'hb', available,
    'hh', held, 'he', '')
  redis.call('ZADD', KEYS[3], expires, account .. ':' .. id)
end
return {'loaded'}
