# Minimal image for the webhook. tsx runs the TypeScript directly, so there is no build stage.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund
COPY config ./config
COPY src ./src
COPY pricing ./pricing
COPY inventory ./inventory
COPY amounts ./amounts
COPY tsconfig.json ./
# The paper setup writes its generated maker key (and advertised-list state) here.
RUN mkdir -p /app/data && chown node:node /app/data
ENV DATA_DIR=/app/data
EXPOSE 8080
USER node
CMD ["npx", "tsx", "src/main.ts"]
