#!lua flags=no-writes
-- Reconciliation's view of one partition at one instant: the marker's state, the id of the
-- journal's last entry ('0-0' when empty), the server's time in ms, and the balances (available +
-- held) of the accounts asked for ('' when absent). Reads only, so the answer is one consistent snapshot of those keys;
-- every entry appended later has a higher id, stamped at or after that time.
-- KEYS: marker, journal, account keys..., then the same accounts' named-balance keys in the same order
-- ARGV: marker value, then the account ids in the order of their keys
-- Reply: state, last id, time, each account's balance, then each account's named balances as
-- 'name=amount,...' ('' when none), then each account's bucket count ('1' unless it is split, or being
-- merged: then AccountComparison sums its buckets), then what each account holds ('' when absent), in
-- the same order.
local expected = ARGV[1]
local base = partition_base(KEYS[1])
local n = #ARGV - 1
if not base or KEYS[2] ~= base .. ':journal' or #KEYS ~= 2 + 2 * n then
  return {'invalid_argument', 'keys'}
end
for i = 3, 2 + n do
  if id_problem(ARGV[i - 1]) or KEYS[i] ~= base .. ':acct:' .. ARGV[i - 1]
      or KEYS[i + n] ~= base .. ':bal:' .. ARGV[i - 1] then
    return {'invalid_argument', 'keys'}
  end
end

local marker = redis.call('GET', KEYS[1])
local state = 'ok'
if not marker then state = 'no_marker' elseif marker ~= expected then state = 'marker_mismatch' end
local last = '0-0'
local tail = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if #tail > 0 then last = tail[1][1] end
local t = redis.call('TIME')
local now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local reply = {state, last, now}
for i = 3, 2 + n do
  -- What the account owns: available + held (a hold moves quota between the two, the ledger too).
  local f = redis.call('HMGET', KEYS[i], 'balance', 'held')
  if not f[1] then
    reply[#reply + 1] = ''
  else
    reply[#reply + 1] = string.format('%d', tonumber(f[1]) + tonumber(f[2] or '0'))
  end
end
for i = 3 + n, 2 + 2 * n do
  local named = redis.call('HGETALL', KEYS[i])
  local parts = {}
  for j = 1, #named, 2 do parts[#parts + 1] = named[j] .. '=' .. named[j + 1] end
  reply[#reply + 1] = table.concat(parts, ',')
end
for i = 3, 2 + n do
  local split = redis.call('HMGET', KEYS[i], 'buckets', 'drain')
  reply[#reply + 1] = string.format('%d', math.max(tonumber(split[1] or '1'), tonumber(split[2] or '1')))
end
for i = 3, 2 + n do
  local f = redis.call('HMGET', KEYS[i], 'balance', 'held')
  if not f[1] then reply[#reply + 1] = '' else reply[#reply + 1] = f[2] or '0' end
end
return reply
