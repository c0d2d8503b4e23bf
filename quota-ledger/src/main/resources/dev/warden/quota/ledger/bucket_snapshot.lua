#!lua flags=no-writes
-- Reconciliation's view of the buckets of one split account that live in one partition, at one instant:
-- the marker's state, the journal's last id, the server's time in ms, and each bucket's balance (bucket 0,
-- the account key, available + held; '' when absent). Reads only. A split account is compared as the sum
-- of one such snapshot per partition of its buckets, each against its own stream (see AccountComparison).
-- KEYS: marker, journal, bucket keys...
-- ARGV: marker value, account, then the buckets' indices in the order of their keys
local expected, account = ARGV[1], ARGV[2]
local base = partition_base(KEYS[1])
local n = #KEYS - 2
if not base or KEYS[2] ~= base .. ':journal' or id_problem(account) or #ARGV ~= 2 + n then
  return {'invalid_argument', 'keys'}
end
for i = 1, n do
  local index = ARGV[2 + i]
  local want = index == '0' and (base .. ':acct:' .. account) or (base .. ':bkt:' .. account .. ':' .. index)
  if not string.find(index, '^[0-9]+$') or KEYS[2 + i] ~= want then return {'invalid_argument', 'keys'} end
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
for i = 1, n do
  local f = redis.call('HMGET', KEYS[2 + i], 'balance', 'held')
  if not f[1] then
    reply[#reply + 1] = ''
  else
    reply[#reply + 1] = string.format('%d', tonumber(f[1]) + tonumber(f[2] or '0'))
  end
end
return reply
