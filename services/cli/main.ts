// The `relay` command as built into dist/ (the image's entry point): the services and the mesh
// operations, without the development relay.
import { runRelayCli } from './program.js';

await runRelayCli();
