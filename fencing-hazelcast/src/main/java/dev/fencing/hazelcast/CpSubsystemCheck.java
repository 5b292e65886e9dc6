package dev.fencing.hazelcast;

import com.hazelcast.client.impl.clientside.HazelcastClientProxy;
import com.hazelcast.config.cp.CPSubsystemConfig;
import com.hazelcast.core.HazelcastInstance;
import dev.fencing.FencingConfigurationException;

/**
 * The startup checks of a {@link HazelcastTokenIssuer}: the instance is running, and a member's CP Subsystem runs
 * with CP members. In "unsafe mode" ({@code cp-member-count} 0) the CP structures live in partitions without Raft,
 * and a member failure can hand out a fence again: refused, fail closed.
 */
final class CpSubsystemCheck {

    private CpSubsystemCheck() {
    }

    /** The member or client and its cluster, for messages. */
    static String describe(HazelcastInstance hazelcast) {
        if (hazelcast instanceof HazelcastClientProxy client) {
            var config = client.getClientConfig();
            return "Hazelcast client '" + hazelcast.getName() + "' of cluster '" + config.getClusterName() + "' at "
                    + config.getNetworkConfig().getAddresses();
        }
        try {
            return "Hazelcast member '" + hazelcast.getName() + "' of cluster '"
                    + hazelcast.getConfig().getClusterName() + "'";
        } catch (RuntimeException notAMember) {
            return "Hazelcast instance '" + hazelcast.getName() + "'";
        }
    }

    /**
     * Refuses an instance that is not running, and a member whose CP Subsystem is in unsafe mode.
     *
     * @throws FencingConfigurationException naming the instance and what to change
     */
    static void refuseUnsafeMode(HazelcastInstance hazelcast, String service) {
        if (!hazelcast.getLifecycleService().isRunning()) {
            throw new FencingConfigurationException(service + " is not running: start it before the "
                    + "HazelcastTokenIssuer");
        }
        if (hazelcast instanceof HazelcastClientProxy) {
            return; // a client cannot read the members' configuration; docs/issuers.md says what to check
        }
        CPSubsystemConfig cp;
        try {
            cp = hazelcast.getConfig().getCPSubsystemConfig();
        } catch (UnsupportedOperationException notAMember) {
            return;
        }
        if (cp.getCPMemberCount() == 0) {
            throw new FencingConfigurationException("The CP Subsystem of " + service + " runs in unsafe mode "
                    + "(cp-member-count 0): its FencedLock fences are not safe across a member failure. Set "
                    + "hazelcast.cp-subsystem.cp-member-count to 3 or more (open source up to Hazelcast 5.4; "
                    + "5.5 and later need Enterprise for the CP Subsystem)");
        }
    }

    /**
     * Refuses a lock outside the CP group {@code default}: in unsafe mode a lock lives in a group of its own partition,
     * named after it, and a member failure can hand out a fence again. How a client tells unsafe mode, which it cannot
     * read from the members' configuration.
     *
     * @throws FencingConfigurationException naming the instance, the lock's group and what to change
     */
    static void refuseOutsideDefaultGroup(com.hazelcast.cp.lock.FencedLock lock, String service) {
        String group = lock.getGroupId().getName();
        if (!"default".equals(group)) {
            throw new FencingConfigurationException("The FencedLock '" + lock.getName() + "' of " + service + " is in "
                    + "the CP group '" + group + "', not 'default': the cluster's CP Subsystem runs in unsafe mode "
                    + "(cp-member-count 0), where fences are not safe across a member failure. Set "
                    + "hazelcast.cp-subsystem.cp-member-count to 3 or more on the members");
        }
    }
}
