#!lua flags=
-- Opens an account with its initial quota, atomically, and writes the partition marker. No
-- allow-oom flag, so a server over maxmemory refuses the script before it starts.
-- KEYS: marker, account, journal
-- ARGV: account, initial quota (0 allowed), marker value
local account, amount_text, expected = ARGV[1], ARGV[2], ARGV[3]

local bad = id_problem(account)
if bad then return {'invalid_id', 'ACCOUNT', bad} end
bad = amount_problem(amount_text, true)
if bad then return {'invalid_amount', bad} end
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':acct:' .. account or KEYS[3] ~= base .. ':journal' then
  return {'invalid_argument', 'keys'}
end

local marker = redis.call('GET', KEYS[1])
if marker and marker ~= expected then return {'marker_mismatch', marker} end
local balance = redis.call('HGET', KEYS[2], 'balance')
if balance then return {'exists', balance} end

-- Every check is done; writes start here.
if not marker then redis.call('SET', KEYS[1], expected) end
redis.call('HSET', KEYS[2], 'balance', amount_text)
local entry = redis.call('XADD', KEYS[3], '*', 'account', account, 'kind', 'open', 'amount', amount_text,
  'request', '', 'balance', amount_text, 'token', '-')
return {'applied', amount_text, entry}
