#!lua flags=
-- Acknowledges a batch the ledger has committed (when given its ids; the consumer sends its own XACK just
-- before, which spares each id a trip through Lua), then trims the partition's journal below the oldest
-- entry the group has not acknowledged: an entry leaves Redis only once it is in the database. The floor is
-- read and the trim made in one script, so no entry pending when it trims is removed. Trimming is exact
-- (MINID without '~').
-- KEYS: journal stream
-- ARGV: group, then the ids to acknowledge (none or more)
-- Reply: {'trimmed', <acknowledged>, <entries removed>, <floor id or ''>}
local stream, group = KEYS[1], ARGV[1]
if string.match(stream, '^[^{}]*quota:{p[0-9]+}:journal$') == nil or group == nil or group == '' then
  return {'invalid_argument', 'keys'}
end
if redis.call('EXISTS', stream) == 0 then return {'trimmed', '0', '0', ''} end

local acked = 0
if #ARGV > 1 then
  acked = redis.call('XACK', stream, group, unpack(ARGV, 2))
end

-- The group's last delivered id: everything at or below it was delivered, so whatever of that is not
-- pending has been acknowledged.
local last = nil
for _, info in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
  local name, delivered = nil, nil
  for i = 1, #info, 2 do
    if info[i] == 'name' then name = info[i + 1] end
    if info[i] == 'last-delivered-id' then delivered = info[i + 1] end
  end
  if name == group then last = delivered end
end
if last == nil or last == '0-0' then return {'trimmed', tostring(acked), '0', ''} end

local floor
local pending = redis.call('XPENDING', stream, group)
if tonumber(pending[1]) > 0 then
  floor = pending[2] -- the oldest pending entry stays
else
  local ms, seq = string.match(last, '^([0-9]+)-([0-9]+)$')
  -- The id right after the last delivered one: ids are compared as (ms, seq), and seq never reaches 2^64-1 here.
  floor = ms .. '-' .. string.format('%d', tonumber(seq) + 1)
end
local removed = redis.call('XTRIM', stream, 'MINID', floor)
return {'trimmed', tostring(acked), tostring(removed), floor}
