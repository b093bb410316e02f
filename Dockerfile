# syntax=docker/dockerfile:1
# One image for every role: `docker run <image> serve gateway`, `serve ingress`, `serve admin`, `serve all`, or any
# other relay command (`keys create ...`). Configuration comes from the environment only.

# Node 24 LTS, the supported runtime CI tests with (.ci/run); 22 is supported too (--build-arg NODE_VERSION=22).
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY schemas ./schemas
COPY services ./services
# The operator's console, bundled at build time (no network at run time).
COPY console ./console
COPY tools/console-build.ts ./tools/
RUN npm run build:relay && npm run build:console && npm prune --omit=dev --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim
# One malloc arena per V8 helper thread fragments a long-running server's memory; two keep the
# RSS of an idle stream near its heap size (measured: 17.6 KiB per stream with the default, 11.1).
ENV NODE_ENV=production \
    PORT=8080 \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image runs as the unprivileged user the Node image provides.
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/services/cli/main.js"]
CMD ["serve", "all"]
