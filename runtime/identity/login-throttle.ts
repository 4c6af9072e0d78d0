/**
 * Brute-force protection for password login, per node, in memory.
 *
 * Two independent limits, both on FAILED logins (a success costs nothing
 * and resets its account):
 * - per account (project + normalized email, whether or not it exists, so
 *   the lockout tells nothing about which addresses have accounts):
 *   `accountMaxFailures` failures within `accountWindowMs` lock the account
 *   for `lockoutBaseMs`, doubled at each further lockout (1, 2, 4, 8 … min),
 *   capped at `accountWindowMs`;
 * - per client address: `addressMaxFailures` failures within
 *   `addressWindowMs` block further logins from it until the window ends.
 * While locked, every login (the right password too) answers 429 with
 * Retry-After before any password is hashed, so a flood costs no CPU.
 *
 * Per node: in a cluster each node counts on its own (an attacker spreading
 * over N nodes gets N times the budget; a balancer with sticky addresses
 * keeps it at one). Memory is bounded by `maxEntries` per map.
 */
export interface LoginThrottleOptions {
  accountMaxFailures: number;
  accountWindowMs: number;
  lockoutBaseMs: number;
  addressMaxFailures: number;
  addressWindowMs: number;
  maxEntries?: number;
}

/** Defaults, close to what hosted identity services do (Auth0: 10 per account; Supabase: 30 sign-ins per 5 min per IP). */
export const DEFAULT_LOGIN_THROTTLE: LoginThrottleOptions = {
  accountMaxFailures: 5,
  accountWindowMs: 15 * 60_000,
  lockoutBaseMs: 60_000,
  addressMaxFailures: 30,
  addressWindowMs: 60_000,
};

/** Why a login may not be tried now: how long to wait, and the limit (per account or per address) that was reached. */
export interface LoginRefusal { waitMs: number; limit: number; scope: 'account' | 'address' }

interface AccountState { failures: number; windowStart: number; lockedUntil: number; lockouts: number }
interface AddressState { failures: number; windowStart: number }

export class LoginThrottle {
  private readonly accounts = new Map<string, AccountState>();
  private readonly addresses = new Map<string, AddressState>();
  private readonly inFlight = new Map<string, number>();
  private readonly maxEntries: number;

  constructor(private readonly opts: LoginThrottleOptions = DEFAULT_LOGIN_THROTTLE, private readonly now: () => number = Date.now) {
    this.maxEntries = opts.maxEntries ?? 100_000;
  }

  /**
   * Starts a login attempt: null when it may go ahead (it then counts as in
   * flight until `end`), else why not. Attempts in flight count toward the
   * account's limit, so a burst of concurrent guesses cannot slip past it
   * while the first ones are still being hashed (then: wait 1 s).
   */
  begin(account: string, address: string | null): LoginRefusal | null {
    const refused = this.refusal(account, address);
    if (refused !== null) return refused;
    const a = this.accounts.get(account);
    const failures = a !== undefined && this.now() - a.windowStart < this.opts.accountWindowMs ? a.failures : 0;
    const inFlight = this.inFlight.get(account) ?? 0;
    if (failures + inFlight >= this.opts.accountMaxFailures) return { waitMs: 1000, limit: this.opts.accountMaxFailures, scope: 'account' };
    this.inFlight.set(account, inFlight + 1);
    return null;
  }

  /** Ends an attempt that `begin` let through (call it after failed/succeeded, whatever happened). */
  end(account: string): void {
    const n = (this.inFlight.get(account) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(account);
    else this.inFlight.set(account, n);
  }

  /** Milliseconds until a login for this account from this address may be tried; 0 when it may now. */
  retryAfterMs(account: string, address: string | null): number {
    return this.refusal(account, address)?.waitMs ?? 0;
  }

  private refusal(account: string, address: string | null): LoginRefusal | null {
    const t = this.now();
    let out: LoginRefusal | null = null;
    const a = this.accounts.get(account);
    if (a !== undefined && a.lockedUntil > t) out = { waitMs: a.lockedUntil - t, limit: this.opts.accountMaxFailures, scope: 'account' };
    const ad = address === null ? undefined : this.addresses.get(address);
    if (ad !== undefined && ad.failures >= this.opts.addressMaxFailures && t - ad.windowStart < this.opts.addressWindowMs) {
      const waitMs = ad.windowStart + this.opts.addressWindowMs - t;
      if (out === null || waitMs > out.waitMs) out = { waitMs, limit: this.opts.addressMaxFailures, scope: 'address' };
    }
    return out;
  }

  failed(account: string, address: string | null): void {
    const t = this.now();
    let a = this.accounts.get(account);
    // A quiet window since the last lockout ended forgets the lockout history too.
    if (a !== undefined && t - a.windowStart >= this.opts.accountWindowMs && t - a.lockedUntil >= this.opts.accountWindowMs) a = undefined;
    if (a === undefined) a = { failures: 0, windowStart: t, lockedUntil: 0, lockouts: 0 };
    else if (t - a.windowStart >= this.opts.accountWindowMs) {
      a.failures = 0;
      a.windowStart = t;
    }
    a.failures++;
    if (a.failures >= this.opts.accountMaxFailures) {
      a.lockouts++;
      a.lockedUntil = t + Math.min(this.opts.lockoutBaseMs * 2 ** (a.lockouts - 1), this.opts.accountWindowMs);
      a.failures = 0;
      a.windowStart = t;
    }
    this.put(this.accounts, account, a);
    if (address === null) return;
    let ad = this.addresses.get(address);
    if (ad === undefined || t - ad.windowStart >= this.opts.addressWindowMs) ad = { failures: 0, windowStart: t };
    ad.failures++;
    this.put(this.addresses, address, ad);
  }

  /** A correct password: the account's failures and lockout history are forgotten. */
  succeeded(account: string): void {
    this.accounts.delete(account);
  }

  private put<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key); // re-insert: Map order is then least recently failed first
    if (map.size >= this.maxEntries) {
      const oldest = map.keys().next();
      if (oldest.done !== true) map.delete(oldest.value);
    }
    map.set(key, value);
  }
}
