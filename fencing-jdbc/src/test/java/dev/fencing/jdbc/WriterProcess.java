package dev.fencing.jdbc;

import dev.fencing.context.FencingContext;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * A separate application process for the cross-process test: starts an {@link AppInstance} on the given database,
 * says READY, waits for a line on stdin (its pause), then writes with the token it was given and prints ACCEPTED or
 * REJECTED max_seen=N.
 *
 * <p>Arguments: database name, fence table, data table, key, token value, holder, value.
 */
public final class WriterProcess {

    private WriterProcess() {
    }

    public static void main(String[] args) throws Exception {
        Database database = Database.valueOf(args[0]);
        String key = args[3];
        FencingToken token = new FencingToken("notes:" + key, Long.parseLong(args[4]), args[5]);
        try (AppInstance app = new AppInstance(database, args[1], args[2])) {
            System.out.println("READY");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            try {
                FencingContext.run(token, () -> app.notes().write(key, args[6]));
                System.out.println("ACCEPTED");
            } catch (TokenRejectedException e) {
                System.out.println("REJECTED max_seen=" + e.maxSeen());
            }
        }
        System.out.flush();
    }
}
