export { PasswordHasher, checkPasswordPolicy, type ScryptParams } from './passwords.js';
export { Sessions, sessionIdOf, tokensEqual, type NewSession, type Session, type SessionOptions } from './sessions.js';
export { SigninThrottle, type ThrottleOptions } from './throttle.js';
export { SignupLimit, type SignupLimitOptions } from './signup-limit.js';
export { Users, normalizeEmail, publicUser, type PublicUser, type User, type UserRole, type UsersOptions } from './users.js';
