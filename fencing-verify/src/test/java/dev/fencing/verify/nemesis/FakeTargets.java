package dev.fencing.verify.nemesis;

import java.util.List;

/** Clients that exist only by name, for nemeses that never signal them. */
final class FakeTargets implements Targets {

    private final List<Target> targets;

    FakeTargets(Target... targets) {
        this.targets = List.of(targets);
    }

    static Target client(String name, boolean inCriticalSection) {
        return new Target() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public boolean inCriticalSection() {
                return inCriticalSection;
            }

            @Override
            public boolean isAlive() {
                return true;
            }

            @Override
            public void pause() {
                throw new UnsupportedOperationException("pause " + name);
            }

            @Override
            public void resume() {
                throw new UnsupportedOperationException("resume " + name);
            }
        };
    }

    @Override
    public List<? extends Target> live() {
        return targets;
    }

    @Override
    public void killAndReplace(Target target) {
        throw new UnsupportedOperationException("kill " + target.name());
    }
}
