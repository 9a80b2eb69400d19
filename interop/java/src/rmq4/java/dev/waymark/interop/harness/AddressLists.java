package dev.waymark.interop.harness;

import java.util.List;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.namesrv.TopAddressing;

/**
 * The NameServer lists of an address server and of a broker, as this release reads and keeps
 * them. A 4.x broker does not show the list it registers with (its BrokerOuterAPI has no getter),
 * and re-reads the address server every two minutes with no key to shorten it, so the address
 * server scenario runs on 5.x only.
 */
public final class AddressLists {
    private AddressLists() {
    }

    /** The list a client of this release fetches from the address server at {@code wsAddr}, or null. */
    public static String fetch(String wsAddr) {
        return new TopAddressing(wsAddr).fetchNSAddr(false, 3000);
    }

    /** Not shown by a 4.x broker. */
    public static List<String> broker(BrokerController controller) {
        throw new UnsupportedOperationException("a 4.x broker does not show its NameServer list");
    }
}
