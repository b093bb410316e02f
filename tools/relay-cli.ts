// The `relay` command in a checkout (bin/relay.js runs it compiled, bin/compiled-checkout.js): the built CLI plus the
// development relay, `relay dev` (npm start), which the build does not ship.
import { CliError } from '../services/cli/cli-error.js';
import { runRelayCli } from '../services/cli/program.js';

await runRelayCli({
  dev: async () => {
    // Loaded when it runs: the operator's commands do not load the development relay.
    const [{ runDevServer }, { NatsServerMissing }] = await Promise.all([import('./dev-server.js'), import('./nats-launcher.js')]);
    try {
      await runDevServer();
    } catch (e) {
      // A missing nats-server is a failure like an unreachable one (1), said in its own sentence.
      if (e instanceof NatsServerMissing) throw new CliError(e.message, 1);
      throw e;
    }
  },
});
