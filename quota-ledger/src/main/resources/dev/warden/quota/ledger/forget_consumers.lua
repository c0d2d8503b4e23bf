#!lua flags=
-- The partition's owner forgets the group's other consumers that hold nothing of this stream: a consumer
-- that died, or moved on to other partitions, otherwise stays in the group (and in Redis's memory) for good.
-- Checked and deleted in one script, so a consumer is never deleted while entries are pending on it (its
-- pending entries would be lost from the group, and the journal trimmed below them).
-- KEYS: journal stream
-- ARGV: group, this consumer's name, idle ms a consumer must have been silent
-- Reply: {'forgotten', <count>}
local stream, group, me, idle = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
if string.match(stream, '^[^{}]*quota:{p[0-9]+}:journal$') == nil or group == nil or group == '' or idle == nil then
  return {'invalid_argument', 'args'}
end
if redis.call('EXISTS', stream) == 0 then return {'forgotten', '0'} end
local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', stream, group)
if not ok then return {'forgotten', '0'} end -- no such group (yet)
local forgotten = 0
for _, info in ipairs(consumers) do
  local name, pending, quiet = nil, nil, nil
  for i = 1, #info, 2 do
    if info[i] == 'name' then name = info[i + 1] end
    if info[i] == 'pending' then pending = tonumber(info[i + 1]) end
    if info[i] == 'idle' then quiet = tonumber(info[i + 1]) end
  end
  if name and name ~= me and pending == 0 and quiet and quiet >= idle then
    redis.call('XGROUP', 'DELCONSUMER', stream, group, name)
    forgotten = forgotten + 1
  end
end
return {'forgotten', tostring(forgotten)}
