package dev.fencing.sample;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;

import java.time.Duration;

/**
 * The race for a strategy whose lock service issues fencing tokens and whose resource checks them: the data is
 * written through the database fence with each client's token.
 */
final class IssuerRace {

    /** How client 1 "pauses": whatever makes its lock service stop honouring its lock. */
    interface Pause {
        void pause() throws Exception;
    }

    private IssuerRace() {
    }

    static Row run(String strategy, String name, SampleDatabase db, TokenIssuer client1Issuer,
                   TokenIssuer client2Issuer, String resource, Pause pause, String pauseText,
                   Progress progress) throws Throwable {
        Lease client1 = client1Issuer.acquire(resource, Duration.ofSeconds(10));
        FencingToken t1 = client1.token();
        progress.say(name, "client 1 acquired token " + t1.value() + "; " + pauseText + " ...");
        pause.pause();
        Lease client2 = client2Issuer.acquire(resource, Duration.ofSeconds(60)); // granted once client 1's lock is gone
        FencingToken t2 = client2.token();
        progress.say(name, "client 2 acquired token " + t2.value() + " and writes X");
        db.writeFenced(t2, "X");
        boolean blocked;
        try {
            db.writeFenced(t1, "Y");
            blocked = false;
            progress.say(name, "client 1 wakes and writes Y with " + t1.value()
                    + ": ACCEPTED (the zombie got through)");
        } catch (TokenRejectedException e) {
            blocked = true;
            progress.say(name, "client 1 wakes and writes Y with " + t1.value() + ": REJECTED, max_seen is "
                    + e.maxSeen());
        }
        client2.close();
        try {
            client1.close();
        } catch (RuntimeException alreadyGone) {
            // its session is gone
        }
        return new Row(strategy, true, t1.value() + ", " + t2.value(), t2.value() > t1.value(), blocked,
                db.read(resource), null);
    }
}
