# syntax=docker/dockerfile:1
# toolpin: build with the whole workspace, run with production dependencies only, as a non-root user.
#
#   docker build -t toolpin .                      the gateway (target runtime)
#   docker run -v "$PWD/my-config:/etc/toolpin:ro" -p 8080:8080 toolpin
#   docker build --target demo -t toolpin-demo .   the demo MCP server (docker-compose.yml)
#
# The gateway reads /etc/toolpin/gateway.yaml: mount a folder holding it and its pin files, and
# listen on 0.0.0.0 in it (loopback is unreachable from outside a container).

ARG NODE_IMAGE=node:20-bookworm-slim

# Every dependency, dev ones included, from the lockfile only (the sources come later, for caching).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY packages/digest/package.json packages/digest/
COPY packages/gateway/package.json packages/gateway/
# Scripts are skipped: the root `prepare` would compile before the sources are copied.
RUN npx -y pnpm@12.4.2 install --frozen-lockfile --ignore-scripts

# Compile both packages.
FROM deps AS build
COPY tsconfig.base.json tsconfig.json ./
COPY packages/digest packages/digest
COPY packages/gateway packages/gateway
RUN npx tsc -b

# The demo MCP server needs the root's dev dependencies (express, the MCP SDK): it runs from the build.
FROM build AS demo
COPY config config
USER node
EXPOSE 3001
CMD ["node", "config/demo-server/server.mjs", "--port", "3001", "--host", "0.0.0.0"]

# Production dependencies only: the dev dependencies are pruned by never installing them here.
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY packages/digest/package.json packages/digest/
COPY packages/gateway/package.json packages/gateway/
RUN npx -y pnpm@12.4.2 install --frozen-lockfile --prod --ignore-scripts

# The gateway: compiled output beside production dependencies, owned by root, run as `node`.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app ./
COPY --from=build /app/packages/digest/dist packages/digest/dist
COPY --from=build /app/packages/gateway/dist packages/gateway/dist
USER node
# MCP listener and admin listener (healthz, readyz, metrics, status).
EXPOSE 8080 8081
# SIGTERM drains: in-flight calls finish (shutdown.graceMs), SSE streams end, exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "packages/gateway/dist/cli/main.js"]
CMD ["serve", "--config", "/etc/toolpin/gateway.yaml"]
