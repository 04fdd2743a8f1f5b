# syntax=docker/dockerfile:1
# Arbiter's image: Node 24 slim, the production dependencies and the built dist/ only, run as a non-root user.
#
#   docker build -t arbiter .
#   docker run -p 8080:8080 -v arbiter-data:/var/lib/arbiter arbiter             # embedded database
#   docker run -e DATABASE_URL=postgres://... -e BILLING_PROVIDER=local arbiter  # PostgreSQL
#
# The runtime stage's COPY lines are the image's whole tree; scripts/image-tree.mjs reads them to assemble the same
# tree in a folder and start it as a non-root user (CI runs it), so what is tested is what ships.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install` with the lockfile in place installs the locked versions. `npm ci` would refuse this lockfile: it wants
# an entry for every optional dependency of every platform, and one of vite's Windows-only ones
# (napi-windows-process-start-time) is not in the registry.
RUN npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY schema ./schema
COPY src ./src
RUN node scripts/build.mjs

FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/var/lib/arbiter
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
COPY data ./data
# The image's own user (uid 1000, `node` in the base image); its data folder is the only place it writes.
RUN mkdir -p /var/lib/arbiter && chown node:node /var/lib/arbiter
USER node
VOLUME ["/var/lib/arbiter"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM reaches node itself (no shell in between): the service drains, finishes its runs and exits.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--max-semi-space-size=32"]
CMD ["dist/main.mjs"]
