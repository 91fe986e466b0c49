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
VOLUME ["/data"]
EXPOSE 8443
ENTRYPOINT ["node", "bin/notary.js"]
CMD ["serve", "--host", "0.0.0.0"]
