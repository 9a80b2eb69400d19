package dev.waymark.interop.harness;

import java.util.List;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.namesrv.DefaultTopAddressing;

/** The NameServer lists of an address server and of a broker, as this release reads and keeps them. */
public final class AddressLists {
    private AddressLists() {
    }

    /** The list a client of this release fetches from the address server at {@code wsAddr}, or null. */
    public static String fetch(String wsAddr) {
        return new DefaultTopAddressing(wsAddr).fetchNSAddr(false, 3000);
    }

    /** The NameServers the broker registers with now, or null. */
    public static List<String> broker(BrokerController controller) {
        return controller.getBrokerOuterAPI().getNameServerAddressList();
    }
}
