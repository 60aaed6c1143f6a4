import { afterEach, describe, expect, it } from 'vitest';
import { childEnvironment, config, parseGatewayConfig, setEnvironment } from '.';
import { restoreEnv, setEnv } from '@/testing/env';

afterEach(restoreEnv);

describe('the gateway', () => {
  it("reads only its own variables: the console's are none of its business", () => {
    expect(
      parseGatewayConfig({
        DATABASE_QUERY_TIMEOUT_MS: 'ten',
        COUNTERSIGN_URL: 'https://cs.example.com',
        COUNTERSIGN_API_KEY: ' k ',
      }),
    ).toEqual({ COUNTERSIGN_URL: 'https://cs.example.com', COUNTERSIGN_API_KEY: 'k' });
    expect(() => parseGatewayConfig({ COUNTERSIGN_URL: 'not a url' })).toThrow(
      'COUNTERSIGN_URL: "not a url" is not an http(s) URL; expected e.g. https://countersign.example.com',
    );
  });
});

describe('config()', () => {
  it('is parsed once and kept; setEnv (tests) and setEnvironment read it again', () => {
    setEnv({ DATABASE_POOL_SIZE: '3' });
    const first = config();
    expect(first.DATABASE_POOL_SIZE).toBe(3);
    process.env.DATABASE_POOL_SIZE = '5'; // behind its back: not seen
    expect(config()).toBe(first);
    setEnvironment({ DATABASE_POOL_SIZE: '6' });
    expect(config().DATABASE_POOL_SIZE).toBe(6);
    setEnv({ DATABASE_POOL_SIZE: 'ten' });
    expect(() => config()).toThrow('DATABASE_POOL_SIZE: "ten" is not a number');
  });
});

describe('childEnvironment', () => {
  it("is this process's environment with the extra variables on top, undefined ones and `without` left out", () => {
    setEnv({ CS_CHILD_A: 'a', CS_CHILD_B: 'b', CS_CHILD_C: 'c' });
    const env = childEnvironment(
      { CS_CHILD_B: 'B', CS_CHILD_C: undefined, CS_CHILD_D: 'd' },
      { without: ['CS_CHILD_A'] },
    );
    expect(env).toMatchObject({ CS_CHILD_B: 'B', CS_CHILD_D: 'd' });
    expect(env).not.toHaveProperty('CS_CHILD_A');
    expect(env).not.toHaveProperty('CS_CHILD_C');
    expect(env.PATH).toBe(process.env.PATH);
    expect(Object.values(env).every((v) => typeof v === 'string')).toBe(true);
  });
});
