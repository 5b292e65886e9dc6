package dev.fencing.verify.run;

import dev.fencing.verify.checker.CheckResult;
import dev.fencing.verify.network.ClientNetwork;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * What a run produced.
 *
 * @param name             the run's name, also its directory's
 * @param dir              where history.jsonl, summary.json and summary.md are
 * @param result           the checker's result on the merged history
 * @param processesStarted how many client processes ran (replacements included)
 * @param nemesisStrikes   how many faults were injected
 * @param duration         from the first client start to the end of the check
 * @param tablePrefix      the run's tables were {@code <tablePrefix>_fence}, {@code _lease} and {@code _set}
 * @param networks         the network namespaces its clients ran in (the partition nemesis), each closed by now
 */
public record RunResult(String name, Path dir, CheckResult result, int processesStarted, int nemesisStrikes,
                        Duration duration, String tablePrefix, List<ClientNetwork> networks) {
}
