import { Migration20261122000000_initial } from './Migration20261122000000_initial.ts';

/** Every migration, in order. Listed explicitly so that no file globbing happens at start-up. */
export const MIGRATIONS = [
  { name: 'Migration20261122000000_initial', class: Migration20261122000000_initial },
];
