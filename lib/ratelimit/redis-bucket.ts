// The token bucket of lib/ratelimit/bucket.ts, kept in Redis so every instance shares it: a Lua
// script rate-limiter-flexible runs for each take (its customIncrTtlLuaScript), atomic in Redis,
// on Redis's clock. Pure: the script's text and the reading of its answer.
//
// rate-limiter-flexible calls it with KEYS[1] = the bucket's key and ARGV = [points to take (1, or
// −1 to give one back), whole seconds to keep the key, burst, burst / perSecond], and reads back
// {consumed, ms}: allowed while consumed ≤ burst. So: allowed → consumed = burst − ⌊tokens⌋ (its
// remainingPoints is then ⌊tokens⌋, as in BucketStore); refused → burst + 1 on the first refusal
// since the last success, burst + 2 after, with the ms until a token is there again.
import type { BucketLimit, Take } from './bucket';
import { retryAfterSeconds } from './bucket';

export const TOKEN_BUCKET_LUA = `
local burst = tonumber(ARGV[3])
local rate = burst / tonumber(ARGV[4])
local take = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at', 'refused')
local tokens = tonumber(s[1]) or burst
local at = tonumber(s[2]) or now
local refused = s[3] == '1'
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local consumed
local ms = math.ceil((burst - tokens) / rate * 1000)
if take < 0 then
  tokens = math.min(burst, tokens - take)
  consumed = 0
elseif tokens >= take then
  tokens = tokens - take
  refused = false
  consumed = burst - math.floor(tokens)
else
  consumed = refused and (burst + 2) or (burst + 1)
  refused = true
  ms = math.ceil((take - tokens) / rate * 1000)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now), 'refused', refused and '1' or '0')
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[4]) * 1000) + 1000)
return {consumed, ms}
`;

/** rate-limiter-flexible's points and duration for a limit (duration at least 1 s: see the script). */
export const redisLimitOptions = (limit: BucketLimit) => ({
  points: limit.burst,
  duration: Math.max(1, limit.burst / limit.perSecond),
});

/** A refusal as a Take, from rate-limiter-flexible's answer (consumedPoints, msBeforeNext). */
export function refusedTake(limit: BucketLimit, consumedPoints: number, msBeforeNext: number): Take {
  const perSecond = limit.burst / redisLimitOptions(limit).duration;
  return {
    allowed: false,
    retryAfterSeconds: retryAfterSeconds((msBeforeNext / 1000) * perSecond, perSecond),
    first: consumedPoints === limit.burst + 1,
  };
}
