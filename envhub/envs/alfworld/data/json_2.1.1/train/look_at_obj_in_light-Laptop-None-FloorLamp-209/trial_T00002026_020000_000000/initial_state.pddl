
(define (problem plan_trial_T00002026_020000_000000)
    (:domain alfred)
    (:objects
        agent1 - agent
        Laptop_bar__minus_02_dot_97_bar__plus_01_dot_09_bar__plus_01_dot_14 - object
        Pillow_bar__plus_01_dot_22_bar__plus_01_dot_50_bar__plus_02_dot_61 - object
        KeyChain_bar__minus_00_dot_03_bar__plus_01_dot_36_bar__plus_00_dot_98 - object
        RemoteControl_bar__plus_01_dot_47_bar__plus_00_dot_06_bar__minus_00_dot_05 - object
        Vase_bar__plus_01_dot_36_bar__plus_00_dot_52_bar__minus_00_dot_16 - object
        Watch_bar__minus_00_dot_24_bar__plus_00_dot_85_bar__plus_02_dot_61 - object
        Pen_bar__plus_02_dot_33_bar__plus_01_dot_78_bar__plus_00_dot_07 - object
        FloorLamp_bar__plus_00_dot_10_bar__plus_01_dot_24_bar__plus_01_dot_68 - object
        FloorLampType - otype
        KeyChainType - otype
        LaptopType - otype
        PenType - otype
        PillowType - otype
        RemoteControlType - otype
        VaseType - otype
        WatchType - otype
        ArmChairType - rtype
        CoffeeTableType - rtype
        DrawerType - rtype
        DresserType - rtype
        GarbageCanType - rtype
        SideTableType - rtype
        SofaType - rtype
        ArmChair_bar__minus_04_dot_39_bar__plus_00_dot_00_bar__minus_03_dot_55 - receptacle
        CoffeeTable_bar__minus_02_dot_47_bar__plus_00_dot_00_bar__minus_02_dot_49 - receptacle
        Drawer_bar__minus_02_dot_98_bar__plus_00_dot_17_bar__minus_05_dot_01 - receptacle
        Drawer_bar__minus_02_dot_98_bar__plus_00_dot_48_bar__minus_05_dot_01 - receptacle
        Drawer_bar__minus_04_dot_02_bar__plus_00_dot_48_bar__minus_05_dot_01 - receptacle
        Dresser_bar__minus_03_dot_51_bar__plus_00_dot_00_bar__minus_05_dot_10 - receptacle
        GarbageCan_bar__minus_00_dot_97_bar__plus_00_dot_00_bar__minus_05_dot_06 - receptacle
        SideTable_bar__minus_02_dot_02_bar__minus_00_dot_01_bar__minus_05_dot_08 - receptacle
        SideTable_bar__minus_05_dot_43_bar__minus_00_dot_01_bar__minus_05_dot_12 - receptacle
        Sofa_bar__minus_04_dot_36_bar__plus_00_dot_00_bar__minus_02_dot_09 - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar__minus_10_bar__minus_17_bar_2_bar_30 - location
        loc_bar__minus_12_bar__minus_18_bar_3_bar_30 - location
        loc_bar__minus_13_bar__minus_15_bar_3_bar_30 - location
        loc_bar__minus_13_bar__minus_17_bar_2_bar_30 - location
        loc_bar__minus_13_bar__minus_8_bar_3_bar_30 - location
        loc_bar__minus_16_bar__minus_18_bar_1_bar_30 - location
        loc_bar__minus_23_bar__minus_17_bar_2_bar_30 - location
        loc_bar__minus_5_bar__minus_10_bar_3_bar_30 - location
        loc_bar__minus_6_bar__minus_19_bar_1_bar_30 - location
        loc_bar__minus_7_bar__minus_18_bar_3_bar_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType ArmChair_bar__minus_04_dot_39_bar__plus_00_dot_00_bar__minus_03_dot_55 ArmChairType)
        (receptacleAtLocation ArmChair_bar__minus_04_dot_39_bar__plus_00_dot_00_bar__minus_03_dot_55 loc_bar__minus_13_bar__minus_15_bar_3_bar_30)
        (receptacleType CoffeeTable_bar__minus_02_dot_47_bar__plus_00_dot_00_bar__minus_02_dot_49 CoffeeTableType)
        (receptacleAtLocation CoffeeTable_bar__minus_02_dot_47_bar__plus_00_dot_00_bar__minus_02_dot_49 loc_bar__minus_5_bar__minus_10_bar_3_bar_30)
        (receptacleType Drawer_bar__minus_02_dot_98_bar__plus_00_dot_17_bar__minus_05_dot_01 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_98_bar__plus_00_dot_17_bar__minus_05_dot_01 loc_bar__minus_7_bar__minus_18_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_98_bar__plus_00_dot_17_bar__minus_05_dot_01)
        (receptacleType Drawer_bar__minus_02_dot_98_bar__plus_00_dot_48_bar__minus_05_dot_01 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_98_bar__plus_00_dot_48_bar__minus_05_dot_01 loc_bar__minus_16_bar__minus_18_bar_1_bar_30)
        (openable Drawer_bar__minus_02_dot_98_bar__plus_00_dot_48_bar__minus_05_dot_01)
        (receptacleType Drawer_bar__minus_04_dot_02_bar__plus_00_dot_48_bar__minus_05_dot_01 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_04_dot_02_bar__plus_00_dot_48_bar__minus_05_dot_01 loc_bar__minus_12_bar__minus_18_bar_3_bar_30)
        (openable Drawer_bar__minus_04_dot_02_bar__plus_00_dot_48_bar__minus_05_dot_01)
        (receptacleType Dresser_bar__minus_03_dot_51_bar__plus_00_dot_00_bar__minus_05_dot_10 DresserType)
        (receptacleAtLocation Dresser_bar__minus_03_dot_51_bar__plus_00_dot_00_bar__minus_05_dot_10 loc_bar__minus_13_bar__minus_17_bar_2_bar_30)
        (receptacleType GarbageCan_bar__minus_00_dot_97_bar__plus_00_dot_00_bar__minus_05_dot_06 GarbageCanType)
        (receptacleAtLocation GarbageCan_bar__minus_00_dot_97_bar__plus_00_dot_00_bar__minus_05_dot_06 loc_bar__minus_6_bar__minus_19_bar_1_bar_30)
        (receptacleType SideTable_bar__minus_02_dot_02_bar__minus_00_dot_01_bar__minus_05_dot_08 SideTableType)
        (receptacleAtLocation SideTable_bar__minus_02_dot_02_bar__minus_00_dot_01_bar__minus_05_dot_08 loc_bar__minus_10_bar__minus_17_bar_2_bar_30)
        (receptacleType SideTable_bar__minus_05_dot_43_bar__minus_00_dot_01_bar__minus_05_dot_12 SideTableType)
        (receptacleAtLocation SideTable_bar__minus_05_dot_43_bar__minus_00_dot_01_bar__minus_05_dot_12 loc_bar__minus_23_bar__minus_17_bar_2_bar_30)
        (receptacleType Sofa_bar__minus_04_dot_36_bar__plus_00_dot_00_bar__minus_02_dot_09 SofaType)
        (receptacleAtLocation Sofa_bar__minus_04_dot_36_bar__plus_00_dot_00_bar__minus_02_dot_09 loc_bar__minus_13_bar__minus_8_bar_3_bar_30)
        (canContain ArmChairType KeyChainType)
        (canContain ArmChairType LaptopType)
        (canContain ArmChairType PillowType)
        (canContain ArmChairType RemoteControlType)
        (canContain CoffeeTableType KeyChainType)
        (canContain CoffeeTableType LaptopType)
        (canContain CoffeeTableType PenType)
        (canContain CoffeeTableType RemoteControlType)
        (canContain CoffeeTableType VaseType)
        (canContain CoffeeTableType WatchType)
        (canContain DrawerType KeyChainType)
        (canContain DrawerType PenType)
        (canContain DrawerType RemoteControlType)
        (canContain DrawerType WatchType)
        (canContain DresserType KeyChainType)
        (canContain DresserType LaptopType)
        (canContain DresserType PenType)
        (canContain DresserType RemoteControlType)
        (canContain DresserType VaseType)
        (canContain DresserType WatchType)
        (canContain GarbageCanType PenType)
        (canContain SideTableType KeyChainType)
        (canContain SideTableType LaptopType)
        (canContain SideTableType PenType)
        (canContain SideTableType RemoteControlType)
        (canContain SideTableType VaseType)
        (canContain SideTableType WatchType)
        (canContain SofaType KeyChainType)
        (canContain SofaType LaptopType)
        (canContain SofaType PillowType)
        (canContain SofaType RemoteControlType)
        (objectType Laptop_bar__minus_02_dot_97_bar__plus_01_dot_09_bar__plus_01_dot_14 LaptopType)
        (inReceptacle Laptop_bar__minus_02_dot_97_bar__plus_01_dot_09_bar__plus_01_dot_14 Dresser_bar__minus_03_dot_51_bar__plus_00_dot_00_bar__minus_05_dot_10)
        (objectAtLocation Laptop_bar__minus_02_dot_97_bar__plus_01_dot_09_bar__plus_01_dot_14 loc_bar__minus_13_bar__minus_17_bar_2_bar_30)
        (pickupable Laptop_bar__minus_02_dot_97_bar__plus_01_dot_09_bar__plus_01_dot_14)
        (objectType Pillow_bar__plus_01_dot_22_bar__plus_01_dot_50_bar__plus_02_dot_61 PillowType)
        (inReceptacle Pillow_bar__plus_01_dot_22_bar__plus_01_dot_50_bar__plus_02_dot_61 ArmChair_bar__minus_04_dot_39_bar__plus_00_dot_00_bar__minus_03_dot_55)
        (objectAtLocation Pillow_bar__plus_01_dot_22_bar__plus_01_dot_50_bar__plus_02_dot_61 loc_bar__minus_13_bar__minus_15_bar_3_bar_30)
        (pickupable Pillow_bar__plus_01_dot_22_bar__plus_01_dot_50_bar__plus_02_dot_61)
        (objectType KeyChain_bar__minus_00_dot_03_bar__plus_01_dot_36_bar__plus_00_dot_98 KeyChainType)
        (inReceptacle KeyChain_bar__minus_00_dot_03_bar__plus_01_dot_36_bar__plus_00_dot_98 CoffeeTable_bar__minus_02_dot_47_bar__plus_00_dot_00_bar__minus_02_dot_49)
        (objectAtLocation KeyChain_bar__minus_00_dot_03_bar__plus_01_dot_36_bar__plus_00_dot_98 loc_bar__minus_5_bar__minus_10_bar_3_bar_30)
        (pickupable KeyChain_bar__minus_00_dot_03_bar__plus_01_dot_36_bar__plus_00_dot_98)
        (objectType RemoteControl_bar__plus_01_dot_47_bar__plus_00_dot_06_bar__minus_00_dot_05 RemoteControlType)
        (inReceptacle RemoteControl_bar__plus_01_dot_47_bar__plus_00_dot_06_bar__minus_00_dot_05 Drawer_bar__minus_04_dot_02_bar__plus_00_dot_48_bar__minus_05_dot_01)
        (objectAtLocation RemoteControl_bar__plus_01_dot_47_bar__plus_00_dot_06_bar__minus_00_dot_05 loc_bar__minus_12_bar__minus_18_bar_3_bar_30)
        (pickupable RemoteControl_bar__plus_01_dot_47_bar__plus_00_dot_06_bar__minus_00_dot_05)
        (objectType Vase_bar__plus_01_dot_36_bar__plus_00_dot_52_bar__minus_00_dot_16 VaseType)
        (inReceptacle Vase_bar__plus_01_dot_36_bar__plus_00_dot_52_bar__minus_00_dot_16 SideTable_bar__minus_05_dot_43_bar__minus_00_dot_01_bar__minus_05_dot_12)
        (objectAtLocation Vase_bar__plus_01_dot_36_bar__plus_00_dot_52_bar__minus_00_dot_16 loc_bar__minus_23_bar__minus_17_bar_2_bar_30)
        (pickupable Vase_bar__plus_01_dot_36_bar__plus_00_dot_52_bar__minus_00_dot_16)
        (objectType Watch_bar__minus_00_dot_24_bar__plus_00_dot_85_bar__plus_02_dot_61 WatchType)
        (inReceptacle Watch_bar__minus_00_dot_24_bar__plus_00_dot_85_bar__plus_02_dot_61 Drawer_bar__minus_04_dot_02_bar__plus_00_dot_48_bar__minus_05_dot_01)
        (objectAtLocation Watch_bar__minus_00_dot_24_bar__plus_00_dot_85_bar__plus_02_dot_61 loc_bar__minus_12_bar__minus_18_bar_3_bar_30)
        (pickupable Watch_bar__minus_00_dot_24_bar__plus_00_dot_85_bar__plus_02_dot_61)
        (objectType Pen_bar__plus_02_dot_33_bar__plus_01_dot_78_bar__plus_00_dot_07 PenType)
        (inReceptacle Pen_bar__plus_02_dot_33_bar__plus_01_dot_78_bar__plus_00_dot_07 CoffeeTable_bar__minus_02_dot_47_bar__plus_00_dot_00_bar__minus_02_dot_49)
        (objectAtLocation Pen_bar__plus_02_dot_33_bar__plus_01_dot_78_bar__plus_00_dot_07 loc_bar__minus_5_bar__minus_10_bar_3_bar_30)
        (pickupable Pen_bar__plus_02_dot_33_bar__plus_01_dot_78_bar__plus_00_dot_07)
        (objectType FloorLamp_bar__plus_00_dot_10_bar__plus_01_dot_24_bar__plus_01_dot_68 FloorLampType)
        (inReceptacle FloorLamp_bar__plus_00_dot_10_bar__plus_01_dot_24_bar__plus_01_dot_68 SideTable_bar__minus_02_dot_02_bar__minus_00_dot_01_bar__minus_05_dot_08)
        (objectAtLocation FloorLamp_bar__plus_00_dot_10_bar__plus_01_dot_24_bar__plus_01_dot_68 loc_bar__minus_10_bar__minus_17_bar_2_bar_30)
        (toggleable FloorLamp_bar__plus_00_dot_10_bar__plus_01_dot_24_bar__plus_01_dot_68)
        )

        (:goal
             (and
                 (exists (?ot - object
                          ?r - receptacle
                          ?a - agent
                          ?l - location)
                     (and
                         (objectType ?ot FloorLampType)
                         (toggleable ?ot)
                         (isToggled ?ot)
                         (receptacleAtLocation ?r ?l)
                         (atLocation ?a ?l)
                         (inReceptacle ?ot ?r)
                     )
                 )
                 (exists (?o - object
                          ?a - agent)
                     (and
                         (objectType ?o LaptopType)
                         (holds ?a ?o)
                     )
                 )
             )
        )
    )
    
