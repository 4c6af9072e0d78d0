import { PgClient, PgliteClient } from '../../storage/index.js';
import { runStorageContract } from '../contracts/storage.js';
import { createTestDatabase } from '../support/server.js';
import { withServices } from '../support/services.js';

runStorageContract('pglite', async () => {
  const client = await PgliteClient.open(undefined);
  return { client, dispose: () => client.close() };
});

// With TEST_DATABASE_URL set, an unreachable server fails the suite (the before hook throws): it never skips.
withServices('storage contract [postgres]', ['postgres'], () => {
  runStorageContract('postgres', async () => {
    const db = await createTestDatabase();
    const client = new PgClient({ connectionString: db.url, max: 4 });
    try {
      await client.query('SELECT 1');
    } catch (err) {
      await client.close();
      await db.drop();
      throw err;
    }
    return {
      client,
      dispose: async () => {
        await client.close();
        await db.drop();
      },
    };
  });
});
