#!lua flags=
-- Bootstrap: completes a move between the buckets of a split account that the ledger holds only half of.
-- Redis lost its data before the consumers persisted the other half, and with it the pending record that
-- would have given (or the entry that took) the quota: the account came back from the ledger short by a
-- move out (or long by a move in). The missing half is made now on the account key, where bootstrap loaded
-- the account, and journaled under the move's own id, so the ledger gets it too and the move is whole.
-- Once per move: the move's record at the account key's partition (the engine's give record, which Redis lost
-- with the rest) answers a bootstrap run again before the consumers persisted the first run's entry.
-- KEYS: marker, account, journal, move record
-- ARGV: account, kind ('movein' gives back what a lost move took; 'moveout' takes back what it gave), move id,
--       amount, marker value, retention ms
-- Reply: {'settled', balance after}, {'settled', ''} when done before, or {'short', balance}; the marker may
-- still be missing (bootstrap writes it last)
local account, kind, move, amount, expected, retention = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]

if id_problem(account) or id_problem(move) or amount_problem(amount, false) or (kind ~= 'movein' and kind ~= 'moveout')
    or not positive_integer(retention) then
  return {'invalid_argument', 'args'}
end
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':acct:' .. account or KEYS[3] ~= base .. ':journal'
    or KEYS[4] ~= base .. ':moved:' .. account .. ':' .. move then
  return {'invalid_argument', 'keys'}
end
local marker = redis.call('GET', KEYS[1])
if marker and marker ~= expected then return {'marker_mismatch', marker} end
if redis.call('EXISTS', KEYS[4]) == 1 then return {'settled', ''} end
local balance = redis.call('HGET', KEYS[2], 'balance')
if not balance then return {'not_found'} end
if kind == 'moveout' and tonumber(balance) < tonumber(amount) then return {'short', balance} end
if kind == 'movein' and tonumber(amount) > tonumber(MAX_AMOUNT) - tonumber(balance) then return {'short', balance} end

-- Every check is done; writes start here.
local after = canonical(redis.call('HINCRBY', KEYS[2], 'balance', kind == 'movein' and amount or ('-' .. amount)))
redis.call('XADD', KEYS[3], '*', 'account', account, 'kind', kind, 'amount', amount, 'request', move,
  'balance', after, 'token', '-')
redis.call('SET', KEYS[4], 'settled', 'PX', retention)
return {'settled', after}
