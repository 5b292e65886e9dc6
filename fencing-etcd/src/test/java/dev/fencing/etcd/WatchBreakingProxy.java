package dev.fencing.etcd;

import io.etcd.jetcd.api.WatchResponse;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.HandlerRegistry;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A transparent gRPC proxy in front of one etcd member (every call forwarded as bytes) that can break the next watch
 * stream right after etcd's "created" answer, before the events etcd sends on it after that, as a connection that
 * fails at that moment does.
 */
final class WatchBreakingProxy implements AutoCloseable {
    final AtomicBoolean breakNextWatch = new AtomicBoolean();
    final AtomicBoolean broke = new AtomicBoolean();
    private final ManagedChannel upstream;
    private final Server server;

    WatchBreakingProxy(int upstreamPort) throws IOException {
        upstream = Grpc.newChannelBuilderForAddress("127.0.0.1", upstreamPort, InsecureChannelCredentials.create())
                .build();
        MethodDescriptor.Marshaller<byte[]> bytes = new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(byte[] value) {
                return new ByteArrayInputStream(value);
            }

            @Override
            public byte[] parse(InputStream stream) {
                try {
                    return stream.readAllBytes();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
        ServerCallHandler<byte[], byte[]> handler = this::startCall;
        server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                .fallbackHandlerRegistry(new HandlerRegistry() {
                    @Override
                    public ServerMethodDefinition<?, ?> lookupMethod(String method, String authority) {
                        return ServerMethodDefinition.create(MethodDescriptor.newBuilder(bytes, bytes)
                                .setFullMethodName(method).setType(MethodDescriptor.MethodType.UNKNOWN).build(),
                                handler);
                    }
                }).build().start();
    }

    int port() {
        return server.getPort();
    }

    private ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> serverCall, Metadata headers) {
        ClientCall<byte[], byte[]> clientCall = upstream.newCall(serverCall.getMethodDescriptor(),
                CallOptions.DEFAULT);
        boolean watch = serverCall.getMethodDescriptor().getFullMethodName().endsWith("Watch/Watch");
        boolean breakThis = watch && breakNextWatch.compareAndSet(true, false);
        AtomicBoolean closed = new AtomicBoolean();
        clientCall.start(new ClientCall.Listener<>() {
            @Override
            public void onHeaders(Metadata h) {
                if (!closed.get()) {
                    serverCall.sendHeaders(h);
                }
            }

            @Override
            public void onMessage(byte[] message) {
                if (closed.get()) {
                    return;
                }
                serverCall.sendMessage(message);
                try {
                    if (breakThis && WatchResponse.parseFrom(message).getCreated()
                            && closed.compareAndSet(false, true)) {
                        broke.set(true);
                        serverCall.close(Status.UNAVAILABLE.withDescription("proxy broke the watch"),
                                new Metadata());
                        clientCall.cancel("broken by proxy", null);
                        return;
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                clientCall.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                if (closed.compareAndSet(false, true)) {
                    serverCall.close(status, trailers);
                }
            }
        }, headers);
        clientCall.request(1);
        serverCall.request(1);
        return new ServerCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
                clientCall.sendMessage(message);
                serverCall.request(1);
            }

            @Override
            public void onHalfClose() {
                clientCall.halfClose();
            }

            @Override
            public void onCancel() {
                clientCall.cancel("client cancelled", null);
            }
        };
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        upstream.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
