-- Records the fencing epoch a client of the namespace uses, unless a higher one is recorded; never lowers it.
-- KEYS[1] the namespace's epoch key; ARGV[1] the client's epoch
-- Returns the epoch recorded before (0 when none).
local epoch = tonumber(ARGV[1])
if epoch == nil or epoch < 0 or epoch ~= math.floor(epoch) then
  return redis.error_reply('ERR warden epoch: the epoch must be a whole number')
end
local recorded = tonumber(redis.call('GET', KEYS[1])) or 0
if recorded < epoch then
  redis.call('SET', KEYS[1], ARGV[1])
end
return recorded
