import type { EventEnvelope } from './event-store.js';

/**
 * Where the outbox processor publishes a batch before it retires the rows.
 * `publish` resolves only once every event is durably in the log (cluster:
 * every JetStream ack); a rejection makes the processor roll back and keep
 * the rows, so the same events are published again later (at-least-once;
 * the log dedupes on the event id).
 */
export interface EventSink {
  publish(events: readonly EventEnvelope[]): Promise<void>;
}

/** Embedded mode: the SQL `events` table is the log itself, so there is nothing to publish to. */
export const NO_EVENT_SINK: EventSink = {
  publish: () => Promise.resolve(),
};
