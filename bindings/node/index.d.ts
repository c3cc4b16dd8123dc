/** Load chash into a better-sqlite3 Database (anything with loadExtension(path)); returns it. */
export function load<T extends { loadExtension(path: string): unknown }>(db: T): T;
/** The path of the chash loadable extension inside this package. */
export function getLoadablePath(): string;
