# notary: the API node and the crawler worker (one image; the command picks the role).
FROM node:24-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends chromium ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN useradd --system --home /data notary && mkdir -p /data /keys /models && chown notary /data /keys /models
USER notary
# `docker build --build-arg NOTARY_PULL_MODELS=true .` puts the pinned models into the image (`notary models pull`,
# each file checked against its sha256); a new "models" volume starts with them (docker-compose.yml).
ARG NOTARY_PULL_MODELS=false
ARG NOTARY_HUB_URL=https://huggingface.co
RUN if [ "$NOTARY_PULL_MODELS" = true ]; then NOTARY_HUB_URL="$NOTARY_HUB_URL" node bin/notary.js --data /tmp/notary-build models pull --to /models && rm -rf /tmp/notary-build; fi
VOLUME ["/data"]
EXPOSE 8443
ENTRYPOINT ["node", "bin/notary.js"]
CMD ["serve", "--host", "0.0.0.0"]
