#!lua flags=
-- Repair: sets an account's balance (available + held) to the ledger's figure, but only when Redis still
-- holds what reconciliation observed (compare-and-set: a change that landed in between wins, and the
-- next reconciliation looks again). Never in a partition without its marker: Redis lost its data there,
-- and only bootstrap restores it (a repair would make the partition look intact, its other accounts "not
-- found"). No journal entry: the ledger already holds this balance.
-- KEYS: marker, account
-- ARGV: account, observed balance ('' = the account was absent), new balance, marker value
local account, observed, target, expected = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local bad = id_problem(account)
if bad then return {'invalid_id', 'ACCOUNT', bad} end
bad = amount_problem(target, true)
if bad then return {'invalid_amount', bad} end
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':acct:' .. account then
  return {'invalid_argument', 'keys'}
end

local marker = redis.call('GET', KEYS[1])
if not marker then return {'no_marker'} end
if marker ~= expected then return {'marker_mismatch', marker} end
-- Balances here are available + held, as reconciliation compares them; open holds stay as they are
-- and available takes the difference.
local f = redis.call('HMGET', KEYS[2], 'balance', 'held')
local held = f[2] or '0'
local current = ''
if f[1] then current = string.format('%d', tonumber(f[1]) + tonumber(held)) end
if current ~= observed then return {'changed', current} end
if tonumber(target) < tonumber(held) then return {'held_exceeds', held} end

-- Every check is done; writes start here.
local available = string.format('%d', tonumber(target) - tonumber(held))
redis.call('HSET', KEYS[2], 'balance', available)
return {'set', available}
