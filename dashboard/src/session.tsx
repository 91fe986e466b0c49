import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { SessionInfo } from './types';

export interface SessionState {
  session: SessionInfo;
  /** Replaces the session after sign-in, sign-up, sign-out or a password change (new cookie, new CSRF token). */
  update: (session: SessionInfo) => void;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside the session provider');
  return state;
}
