/** The bare accept block's scratch table (in the platform's database) and its HTTP route. */
export const BARE_ACCEPT_TABLE = 'bench.bare_accept';
export const BARE_ACCEPT_PATH = '/accept';
