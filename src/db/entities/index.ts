export { Org, OrgUser, ORG_ROLES, type OrgRole } from './org.ts';
export { User } from './user.ts';
export { ApiKey } from './api-key.ts';
export { DataSource, type EncryptedSecrets } from './data-source.ts';
export { Alert, AlertPauseState } from './alert.ts';
export { Dashboard, DashboardTag, DashboardSnapshot, Playlist, Star } from './dashboard.ts';
export { LoginAttempt } from './login-attempt.ts';
export { Preferences, type PreferencesJson } from './preferences.ts';

import { Org, OrgUser } from './org.ts';
import { User } from './user.ts';
import { ApiKey } from './api-key.ts';
import { DataSource } from './data-source.ts';
import { Alert, AlertPauseState } from './alert.ts';
import { Dashboard, DashboardTag, DashboardSnapshot, Playlist, Star } from './dashboard.ts';
import { LoginAttempt } from './login-attempt.ts';
import { Preferences } from './preferences.ts';

export const ALL_ENTITIES = [
  Org, OrgUser, User, ApiKey, DataSource, Alert, AlertPauseState,
  Dashboard, DashboardTag, DashboardSnapshot, Playlist, Star, LoginAttempt, Preferences,
];
