/** What a value looks like after a JSON round trip (dates become ISO strings), e.g. from the API. */
export type Serialized<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Serialized<U>[]
    : T extends object
      ? { [K in keyof T]: Serialized<T[K]> }
      : T;

/** The same shape the API returns, for server-rendered initial data of client queries. */
export const serialize = <T>(value: T): Serialized<T> => JSON.parse(JSON.stringify(value));
