#!lua flags=
-- Deduct, atomically. No allow-oom flag, so a server over maxmemory refuses the script before it
-- starts; no no-writes flag; no cross-slot keys.
-- KEYS: marker, account, request record, journal
-- ARGV: account, amount, request id, fencing token ('-' when none), retention ms, marker value
-- Order: validate -> partition marker -> idempotency -> account -> fence -> balance; then writes:
-- fence high-water mark, decrement, journal XADD, request record.
local account, amount_text, request, token, retention, expected =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]

local bad = change_problem(account, request, amount_text)
if bad then return bad end
if token == nil or not token_ok(token) then return {'invalid_argument', 'token'} end
if not positive_integer(retention) then return {'invalid_argument', 'retention'} end
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':acct:' .. account or KEYS[3] ~= base .. ':req:' .. account .. ':' .. request
    or KEYS[4] ~= base .. ':journal' then
  return {'invalid_argument', 'keys'}
end

local problem = marker_problem(KEYS[1], expected)
if problem then return problem end

local replay = replay_reply(KEYS[3], 'deduct', account, amount_text)
if replay then return replay end

local balance = redis.call('HGET', KEYS[2], 'balance')
if not balance then return {'not_found'} end
-- A split account's quota is in its buckets (buckets.lua): the caller routes there instead.
local split = redis.call('HGET', KEYS[2], 'buckets')
if split then return {'split', split} end
if not string.find(balance, '^[0-9]+$') then return {'corrupt', balance} end
local fence = redis.call('HGET', KEYS[2], 'fence')
if token ~= '-' and fence and decimal_less(token, fence) then
  return {'stale_fence', fence}
end
local amount = tonumber(amount_text)
local sufficient = tonumber(balance) >= amount
-- While a merge empties the buckets into this key, a shortfall here may not be the account's: the caller
-- completes the merge (Buckets.drain) and tries again.
if not sufficient and redis.call('HEXISTS', KEYS[2], 'drain') == 1 then
  return {'draining', redis.call('HGET', KEYS[2], 'drain')}
end

-- Every check is done; writes start here.
if token ~= '-' and (not fence or decimal_less(fence, token)) then
  redis.call('HSET', KEYS[2], 'fence', token)
end
if not sufficient then return {'insufficient', balance} end
local after = canonical(redis.call('HINCRBY', KEYS[2], 'balance', '-' .. amount_text))
local entry = redis.call('XADD', KEYS[4], '*', 'account', account, 'kind', 'deduct', 'amount', amount_text,
  'request', request, 'balance', after, 'token', token)
redis.call('SET', KEYS[3], 'deduct|' .. amount_text .. '|' .. after .. '|' .. entry .. '|' .. account,
  'PX', retention)
return {'applied', after, entry}
