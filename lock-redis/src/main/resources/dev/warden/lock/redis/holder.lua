-- Reads a lock's holder without touching it.
-- KEYS[1] lock key
-- Returns the lock's value (owner:token) while it is held; false (nil) when it is free.
return redis.call('GET', KEYS[1])
