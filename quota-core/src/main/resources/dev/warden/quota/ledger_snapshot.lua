#!lua flags=no-writes
-- Reconciliation's view of one partition at one instant: the marker's state, the id of the
-- journal's last entry ('0-0' when empty) and the balances of the accounts asked for ('' when
-- absent). Reads only, so the answer is one consistent snapshot of those keys.
-- KEYS: marker, journal, account keys...
-- ARGV: marker value, then the account ids in the order of their keys
local expected = ARGV[1]
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':journal' or #ARGV ~= #KEYS - 1 then
  return {'invalid_argument', 'keys'}
end
for i = 3, #KEYS do
  if id_problem(ARGV[i - 1]) or KEYS[i] ~= base .. ':acct:' .. ARGV[i - 1] then
    return {'invalid_argument', 'keys'}
  end
end

local marker = redis.call('GET', KEYS[1])
local state = 'ok'
if not marker then state = 'no_marker' elseif marker ~= expected then state = 'marker_mismatch' end
local last = '0-0'
local tail = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if #tail > 0 then last = tail[1][1] end
local reply = {state, last}
for i = 3, #KEYS do
  reply[#reply + 1] = redis.call('HGET', KEYS[i], 'balance') or ''
end
return reply
