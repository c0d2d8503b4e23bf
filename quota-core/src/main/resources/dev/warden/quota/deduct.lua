#!lua flags=
-- Deduct, atomically. No allow-oom flag, so a server over maxmemory refuses the script before it
-- starts; no no-writes flag; no cross-slot keys.
-- One deduction:
--   KEYS: marker, account, request record, journal
--   ARGV: account, amount, request id, fencing token ('-' when none), retention ms, marker value,
--   [7] the balance the amount was priced on ('-' or absent when none: a plain deduction)
-- A combined round's deductions of one account, each as one deduction above, in order:
--   KEYS: marker, account, journal, then n request records
--   ARGV: account, '-', '-', token, retention ms, marker value, 'many', n (1..64), then n triples
--   (amount, request id, balance priced on); answers the n replies, in order. A round may be priced before its
--   records were read: a request record of this account already there answers {'recorded', record} whatever it
--   holds (the caller reads it as the first change with that id), before any amount or balance is compared.
-- Order: validate -> partition marker -> idempotency -> account -> fence -> priced-on balance -> balance;
-- then writes:
-- fence high-water mark, decrement, journal XADD, request record.
local function deduct(marker_key, account_key, record_key, journal_key, account, amount_text, request, token,
                      retention, expected, priced_on, combined)
  local bad = change_problem(account, request, amount_text)
  if bad then return bad end
  if token == nil or not token_ok(token) then return {'invalid_argument', 'token'} end
  if priced_on ~= '-' and (#priced_on > 16 or not string.find(priced_on, '^[0-9]+$')) then return {'invalid_argument', 'priced_on'} end
  if not positive_integer(retention) then return {'invalid_argument', 'retention'} end
  local base = partition_base(marker_key)
  if not base or account_key ~= base .. ':acct:' .. account or record_key ~= base .. ':req:' .. account .. ':' .. request
      or journal_key ~= base .. ':journal' then
    return {'invalid_argument', 'keys'}
  end

  local problem = marker_problem(marker_key, expected)
  if problem then return problem end

  if combined then
    local rec = redis.call('GET', record_key)
    if rec then
      local _, _, _, _, acct = parse_record(rec)
      if acct == account then return {'recorded', rec} end
      return replay_reply(record_key, 'deduct', account, amount_text) -- another account's: a conflict
    end
  else
    local replay = replay_reply(record_key, 'deduct', account, amount_text)
    if replay then return replay end
  end

  local balance = redis.call('HGET', account_key, 'balance')
  if not balance then return {'not_found'} end
  -- A split account's quota is in its buckets (buckets.lua): the caller routes there instead.
  local split = redis.call('HGET', account_key, 'buckets')
  if split then return {'split', split} end
  if not string.find(balance, '^[0-9]+$') then return {'corrupt', balance} end
  local fence = redis.call('HGET', account_key, 'fence')
  if token ~= '-' and fence and decimal_less(token, fence) then
    return {'stale_fence', fence}
  end
  -- A charge priced on a balance read earlier (a combined round prices several on the balances it predicts)
  -- applies only to that exact balance: anything else moved it, and the caller prices again. Nothing written.
  if priced_on ~= '-' and tonumber(balance) ~= tonumber(priced_on) then return {'moved', balance} end
  local amount = tonumber(amount_text)
  local sufficient = tonumber(balance) >= amount
  -- While a merge empties the buckets into this key, a shortfall here may not be the account's: the caller
  -- completes the merge (Buckets.drain) and tries again.
  if not sufficient and redis.call('HEXISTS', account_key, 'drain') == 1 then
    return {'draining', redis.call('HGET', account_key, 'drain')}
  end

  -- Every check is done; writes start here.
  if token ~= '-' and (not fence or decimal_less(fence, token)) then
    redis.call('HSET', account_key, 'fence', token)
  end
  if not sufficient then return {'insufficient', balance} end
  local after = canonical(redis.call('HINCRBY', account_key, 'balance', '-' .. amount_text))
  local entry = redis.call('XADD', journal_key, '*', 'account', account, 'kind', 'deduct', 'amount', amount_text,
    'request', request, 'balance', after, 'token', token)
  redis.call('SET', record_key, 'deduct|' .. amount_text .. '|' .. after .. '|' .. entry .. '|' .. account,
    'PX', retention)
  return {'applied', after, entry}
end

if ARGV[7] == 'many' then
  local n = tonumber(ARGV[8])
  if n == nil or n < 1 or n > 64 or n ~= math.floor(n) or #KEYS ~= 3 + n or #ARGV ~= 8 + 3 * n then
    return {'invalid_argument', 'many'}
  end
  local replies = {}
  for i = 1, n do
    local a = 8 + 3 * (i - 1)
    replies[i] = deduct(KEYS[1], KEYS[2], KEYS[3 + i], KEYS[3], ARGV[1], ARGV[a + 1], ARGV[a + 2], ARGV[4], ARGV[5],
      ARGV[6], ARGV[a + 3], true)
  end
  return replies
end
return deduct(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7] or '-', false)
