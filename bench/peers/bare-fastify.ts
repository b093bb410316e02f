// The HTTP ceiling for the ingress scenario: fastify parsing the same JSON bodies and answering like
// the ingress, with nothing behind it (no auth, no validation, no JetStream).
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.post('/', async (request) => ({ accepted: Array.isArray(request.body) ? request.body.length : 1 }));
await app.listen({ host: '127.0.0.1', port: Number(process.env['PORT'] ?? 0) });
