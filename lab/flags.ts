/** Command-line flags of the lab scripts (lab: not part of the product): `--name value`. */

/** The value after `name` in the script's arguments, or undefined when the flag is absent. */
export function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(name);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

/** The value after `name`; throws `usage` when the flag or its value is missing. */
export function requiredFlag(name: string, usage: string): string {
  const value = flag(name);
  if (!value) throw new Error(usage);
  return value;
}
