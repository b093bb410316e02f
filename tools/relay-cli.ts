// The `relay` command in a checkout (bin/relay.js runs this through tsx): the built CLI plus the
// development relay, `relay dev` (npm start), which the build does not ship.
import { CliError } from '../services/cli/admin.js';
import { runRelayCli } from '../services/cli/program.js';
import { runDevServer } from './dev-server.js';
import { NatsServerMissing } from './nats-launcher.js';

await runRelayCli({
  dev: async () => {
    try {
      await runDevServer();
    } catch (e) {
      // A missing nats-server is a failure like an unreachable one (1), said in its own sentence.
      if (e instanceof NatsServerMissing) throw new CliError(e.message, 1);
      throw e;
    }
  },
});
