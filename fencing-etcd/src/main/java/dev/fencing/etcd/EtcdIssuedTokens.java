package dev.fencing.etcd;

import dev.fencing.recovery.IssuedTokens;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What an {@link EtcdTokenIssuer} issued, for recovery: one linearizable count-only read of the resource's lock keys.
 * Tokens are create revisions, which every change in the cluster advances, so the bound is the revision in the read's
 * header (the cluster's revision now, at or above every lock key created before); the resource is held while it has a
 * lock key.
 */
final class EtcdIssuedTokens implements IssuedTokens {

    private final Client client;
    private final String prefix;
    private final String endpoints;

    EtcdIssuedTokens(Client client, String prefix, String endpoints) {
        this.client = client;
        this.prefix = prefix;
        this.endpoints = endpoints;
    }

    @Override
    public long highestIssued(String resource) {
        return read(resource).getHeader().getRevision();
    }

    @Override
    public boolean oneSequence() {
        return true;
    }

    @Override
    public boolean isHeld(String resource) {
        return read(resource).getCount() > 0;
    }

    private GetResponse read(String resource) {
        ByteSequence keys = ByteSequence.from(prefix + EtcdTokenIssuer.lockName(resource) + "/",
                StandardCharsets.UTF_8);
        CompletableFuture<GetResponse> read = client.getKVClient()
                .get(keys, GetOption.builder().isPrefix(true).withCountOnly(true).build());
        try {
            return read.get(EtcdTokenIssuer.PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            read.cancel(true);
            throw new IllegalStateException("etcd at " + endpoints + " did not answer the read of resource '"
                    + resource + "' within " + EtcdTokenIssuer.PROBE_TIMEOUT.toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while reading resource '" + resource + "' from etcd at "
                    + endpoints, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("etcd at " + endpoints + " refused the read of resource '" + resource
                    + "': " + e.getCause(), e.getCause());
        }
    }
}
