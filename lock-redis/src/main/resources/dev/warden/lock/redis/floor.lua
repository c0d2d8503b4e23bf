-- Raises the fence (the last token granted) to a floor while the lock still holds this grant's value,
-- so every later grant of the lock, which takes the fence + 1 or more, gets a token above the floor.
-- KEYS[1] lock key, KEYS[2] fence; ARGV[1] the grant's value (owner:token), ARGV[2] the floor
-- Returns 1 when the fence is at or above the floor, 0 when the lock is gone or someone else's.
local floor = tonumber(ARGV[2])
if floor == nil or floor < 0 or floor ~= math.floor(floor) then
  return redis.error_reply('ERR warden floor: the floor must be a whole number')
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local fence = tonumber(redis.call('GET', KEYS[2])) or 0
if fence < floor then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1
