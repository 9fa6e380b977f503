# orderly: a static, non-root image of the same binary `make build` makes.
# Build:  docker build -t orderly .
# Run:    docker run -v $PWD/conf:/etc/orderly:ro orderly
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Empty: the version the go command records (docs/install.md); --build-arg VERSION=v1.2.3 stamps one.
ARG VERSION=
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/orderly ./cmd/orderly

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/orderly /usr/local/bin/orderly
USER nonroot:nonroot
EXPOSE 8080 9100 9101
ENTRYPOINT ["/usr/local/bin/orderly"]
CMD ["serve", "-config", "/etc/orderly/orderly.hcl"]
