/** The dashboard's client of its JSON endpoints (/dashboard/api/v1): same origin, the session cookie, the CSRF header. */

export const API_BASE = '/dashboard/api/v1';

export interface Problem {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  code?: string;
  [member: string]: unknown;
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
  }
  get status(): number {
    return this.problem.status;
  }
  get code(): string | undefined {
    return this.problem.code;
  }
}

let csrfToken: string | null = null;
let onSignedOut: () => void = () => {};

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when an endpoint answers session_required (the session expired): the app shows the sign-in page. */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new ApiError({ status: 0, title: 'The server could not be reached', detail: 'The server could not be reached. Check your connection and try again.' });
  }
  const text = await response.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const problem: Problem = data && typeof data === 'object' ? { ...(data as Problem), status: response.status } : { status: response.status, title: response.statusText };
    if (problem.code === 'session_required') onSignedOut();
    throw new ApiError(problem);
  }
  return data as T;
}

/** A query string from the defined, non-empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
