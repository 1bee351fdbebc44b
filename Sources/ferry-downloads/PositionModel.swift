import CGLib
import CGtk
import FerryBus

/// A GListModel that holds no items, only a count: GTK asks for the item at a position only when
/// that row is about to be shown, and gets a fresh GObject carrying the position. The rows' data
/// lives in `TaskList`, paged in as rows come into view, so 100,000 tasks cost 100,000 nothing.
/// (GTK 4.8 offers no such model; this registers one — a GObject type with the GListModel
/// interface — from Swift.)
final class PositionModel {
    let object: UnsafeMutablePointer<GObject>
    private(set) var count: UInt32 = 0

    init() {
        object = g_object_new_with_properties(Self.type, 0, nil, nil)!
        // GTK may hold the object longer than this model lives: it reads the count through a
        // weak reference the object owns (released with it), 0 once the model is gone.
        g_object_set_data_full(object, "ferry-model", Box.retained(Weak(self)), Box<Weak<PositionModel>>.release)
    }

    deinit { g_object_unref(object) }

    var listModel: OpaquePointer { OpaquePointer(object) }

    /// Positions `at..<at+removed` were replaced by `added` new ones (GTK rebinds those rows).
    func change(at position: UInt32, removed: UInt32, added: UInt32) {
        count = count - removed + added
        g_list_model_items_changed(listModel, position, removed, added)
    }

    /// The position an item of this model stands for.
    static func position(of item: UnsafeMutableRawPointer) -> Int {
        Int(bitPattern: g_object_get_data(item.assumingMemoryBound(to: GObject.self), "ferry-position")) - 1
    }

    private static func count(_ model: OpaquePointer?) -> UInt32 {
        guard let data = g_object_get_data(UnsafeMutablePointer(model), "ferry-model") else { return 0 }
        return Box<Weak<PositionModel>>.peek(data).object?.count ?? 0
    }

    private static let type: GType = {
        var info = GTypeInfo()
        info.class_size = guint16(MemoryLayout<GObjectClass>.size)
        info.instance_size = guint16(MemoryLayout<GObject>.size)
        let type = g_type_register_static(GTypes.object, "FerryPositionModel", &info, GTypeFlags(0))
        var list = GInterfaceInfo()
        list.interface_init = { iface, _ in
            let i = iface!.assumingMemoryBound(to: GListModelInterface.self)
            i.pointee.get_item_type = { _ in GTypes.object }
            i.pointee.get_n_items = { PositionModel.count($0) }
            i.pointee.get_item = { model, position in
                guard position < PositionModel.count(model) else { return nil }
                let item = g_object_new_with_properties(GTypes.object, 0, nil, nil)
                g_object_set_data(
                    item, "ferry-position",
                    UnsafeMutableRawPointer(bitPattern: Int(position) + 1))
                return UnsafeMutableRawPointer(item)
            }
        }
        g_type_add_interface_static(type, g_list_model_get_type(), &list)
        return type
    }()
}
