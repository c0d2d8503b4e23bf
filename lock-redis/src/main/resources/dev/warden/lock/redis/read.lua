-- Reads one key without touching it: a lock's holder, or the mark of an evicted hold.
-- KEYS[1] the lock key (its value is owner:token while held) or the lock's evicted key (a token)
-- Returns the value; false (nil) when the key does not exist.
return redis.call('GET', KEYS[1])
