#!lua flags=no-writes
-- Reads an account's named balances. no-writes: it still runs on a server over maxmemory (and on a replica).
-- KEYS: marker, account, balances
-- ARGV: account, marker value
local account, expected = ARGV[1], ARGV[2]

local bad = id_problem(account)
if bad then return {'invalid_id', 'ACCOUNT', bad} end
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':acct:' .. account or KEYS[3] ~= base .. ':bal:' .. account then
  return {'invalid_argument', 'keys'}
end

local problem = marker_problem(KEYS[1], expected)
if problem then return problem end
if not redis.call('HGET', KEYS[2], 'balance') then return {'not_found'} end
local reply = {'balances'}
for _, v in ipairs(redis.call('HGETALL', KEYS[3])) do reply[#reply + 1] = v end
return reply
