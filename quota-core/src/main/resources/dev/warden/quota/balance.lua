#!lua flags=no-writes
-- Reads a balance. no-writes: it still runs on a server over maxmemory (and on a replica).
-- KEYS: marker, account
-- ARGV: account, marker value
local account, expected = ARGV[1], ARGV[2]

local bad = id_problem(account)
if bad then return {'invalid_id', 'ACCOUNT', bad} end
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':acct:' .. account then
  return {'invalid_argument', 'keys'}
end

local problem = marker_problem(KEYS[1], expected)
if problem then return problem end
local balance = redis.call('HGET', KEYS[2], 'balance')
if not balance then return {'not_found'} end
local split = redis.call('HMGET', KEYS[2], 'buckets', 'drain')
if split[1] or split[2] then return {'split', split[1] or '1'} end
return {'balance', balance}
