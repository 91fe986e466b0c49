/** Built on first call, then the same value; `built` tells without building. */
export interface Lazy<T> {
  (): T;
  built(): T | undefined;
}

export function lazy<T>(make: () => T): Lazy<T> {
  let made: { value: T } | undefined;
  const get = (() => (made ??= { value: make() }).value) as Lazy<T>;
  get.built = () => made?.value;
  return get;
}
