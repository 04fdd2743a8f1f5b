/** `pg`'s value mapping for bound parameters (its `lib/utils.js`, exported by the package but not typed). */
declare module "pg/lib/utils.js" {
  export function prepareValue(value: unknown): string | Buffer | null
}
