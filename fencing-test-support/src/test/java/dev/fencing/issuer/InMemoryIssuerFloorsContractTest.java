package dev.fencing.issuer;

import dev.fencing.testsupport.IssuerFloorsContract;

/** The in-memory issuer passes the shared {@link IssuerFloorsContract}: a family floor over per-resource counters. */
class InMemoryIssuerFloorsContractTest extends IssuerFloorsContract {

    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }

    @Override
    protected boolean perResourceCounters() {
        return true;
    }
}
